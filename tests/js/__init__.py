"""Node tests of the widgets' JavaScript: each bundle run outside a browser, held to Python."""
