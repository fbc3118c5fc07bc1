"""Usage accounting: a record of every model call, paid by whom, at what price; the API and the reports."""
