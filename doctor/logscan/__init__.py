"""Read a crash log or console output and name the known pitfall behind each error in it.

source.py opens and streams the log (never whole), keywords.py finds candidate lines, lines.py
sorts the unmatched ones, scanner.py ties them together, confirm.py asks the doctor's checks
about each match, analysis.py is the result as data and render.py draws it.
"""
