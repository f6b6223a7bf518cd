import sys

from payorch.cli import main

sys.exit(main())
