// orb-player: the entry point. Kept to one call: everything else lives in plain files (see GLibGlue.swift).
import Foundation

exit(OrbMain.run(LocalName.arguments()))
