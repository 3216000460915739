"""``python -m jack``: see :mod:`jack.cli`."""

from jack.cli import main

raise SystemExit(main())
