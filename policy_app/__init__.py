"""The organization's managed policy: what an administrator allows everyone, and each group, to use."""
