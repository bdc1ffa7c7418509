"""Citations, the whole feature: what the sources' answers say a paper cites (read by
sources.citation_answers), fetched (`fetch`) or loaded from OpenAlex snapshot files (`files`),
written as edges and coverage (`load`), read for pages and feeds (`lists`; papers related by
the graph: papers.related.by_citations), and exported as BibTeX, RIS and CSL-JSON (`export`)."""
