"""The verify stage: what a sample's runs say about its code (contracts, verdict rules, fidelity to the
reference metric core) and the sample record that carries it."""
