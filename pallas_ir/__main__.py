import sys

from pallas_ir.tools.run import main

sys.exit(main())
