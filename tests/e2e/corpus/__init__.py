"""Request corpora for the end-to-end proofs (kept as data: lists of cases with their expected answers)."""
