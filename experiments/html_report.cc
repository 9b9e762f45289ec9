// Placeholder: written by the html-report helper.
