"""The verify stage: what a sample's outputs are checked against, the reference metric core first."""
