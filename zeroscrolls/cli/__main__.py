"""`python -m zeroscrolls.cli` runs the command line, as the `zeroscrolls` console script does."""

from zeroscrolls.cli.main import main

main()
