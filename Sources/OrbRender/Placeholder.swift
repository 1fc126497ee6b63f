import OrbDecode
