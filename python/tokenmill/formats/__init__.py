"""Readers and writers for other libraries' vocabulary files (tiktoken, Hugging Face, GPT-2)."""
