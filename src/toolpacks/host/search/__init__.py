"""Tool search: the index, the model's patterns, the tokenizer, and answering searches."""
