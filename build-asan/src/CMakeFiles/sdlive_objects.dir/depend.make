# Empty dependencies file for sdlive_objects.
# This may be replaced when dependencies are built.
