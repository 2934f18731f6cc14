# Empty compiler generated dependencies file for acceptor-ping.
# This may be replaced when dependencies are built.
