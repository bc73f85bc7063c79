"""Tables, reports and the site laid out for a reader; the only place that knows output formats."""
