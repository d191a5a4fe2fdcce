"""The numpy reference transformer: the oracle every problemgen answer is computed from."""
