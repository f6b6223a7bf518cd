"""The provider_words domain: a provider's verified notifications kept as its word
(providers/words.py), written and read only here."""
