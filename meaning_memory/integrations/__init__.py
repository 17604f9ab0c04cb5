"""The engine behind agent frameworks, as optional extras of the package (docs/frameworks.md):

* ``meaning_memory.integrations.langgraph.MeaningMemoryStore``: a LangGraph ``BaseStore``
  (``pip install "meaning-memory[langgraph]"``);
* ``meaning_memory.integrations.langchain.MeaningMemoryRetriever``: a LangChain retriever
  (``pip install "meaning-memory[langchain]"``).

Both speak to a served engine through the Python client (``meaning_memory.client``) with an
agent's token, so they see what that agent sees and nothing else. This package imports neither
framework: each module imports its own when it is imported.
"""
