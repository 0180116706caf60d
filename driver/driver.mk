# (placeholder: filled by the part's owner)
