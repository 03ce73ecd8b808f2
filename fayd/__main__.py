import sys

from fayd.cli.main import main

sys.exit(main())
