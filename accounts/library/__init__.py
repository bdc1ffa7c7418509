"""The reader's library: lists and saved papers with notes, saved searches and their alerts,
papers like a list (recommendations), import from and export to reference managers. Part of the
`accounts` app (its models are registered there); one flow per module."""
