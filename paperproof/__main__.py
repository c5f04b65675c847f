from paperproof.cli import main

raise SystemExit(main())
