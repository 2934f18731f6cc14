# Empty compiler generated dependencies file for adversarial-socket-symlink-race.
# This may be replaced when dependencies are built.
