"""The files under submissions/ are hostile programs kept as data (``.py.txt``); never collect or import them."""

collect_ignore_glob = ["submissions/*"]
