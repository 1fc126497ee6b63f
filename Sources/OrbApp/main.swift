print("orb-player")
