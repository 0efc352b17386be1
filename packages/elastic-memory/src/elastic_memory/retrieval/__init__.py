"""Retrieval: fusion of the keyword and vector legs."""
