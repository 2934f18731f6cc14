#!/bin/sh
# lint-script: a script daemon; the static check cannot read what it runs.
exec sleep 3600
