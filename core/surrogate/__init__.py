"""The surrogate's signal: sampling its answers, clustering them by meaning, entropy, proxies, preparation."""
