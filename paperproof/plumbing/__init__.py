"""What every stage uses and none owns: atomic writes, locks, progress bars. Imports nothing of paperproof."""
