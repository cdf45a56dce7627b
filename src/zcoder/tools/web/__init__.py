"""fetch_url: web pages for the model (zcoder.tools.web.tool), under the user's rules
(rules), pinned to checked addresses (connect), read as Markdown or text (pages)."""
