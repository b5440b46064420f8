"""The testbed's command line (`python -m testbed`, `testbed`). Runs on the CLI's main thread."""
