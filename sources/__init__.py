"""The clients of the sources every app reads: Semantic Scholar and OpenAlex (identities, works,
figures, references), with the pure readers of their answers. Below the apps in the layer order
(docs/layers.toml): they import only the shared library, so papers, researchers and the demo
may all import them."""
