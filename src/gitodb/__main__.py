"""Allow ``python -m gitodb``."""

from gitodb.cli.main import main

raise SystemExit(main())
