"""The testbed's command line (`python -m testbed`, `testbed`)."""
