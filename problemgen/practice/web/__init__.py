"""``problemgen serve``: practise in the browser with the terminal quiz's rules, grader and progress store.

Modules: ``app`` (Flask routes), ``engine`` (the practice loop over the store), ``inputs`` (answer
widgets and the text they hand to the shared reader), ``preview`` ("read as"), ``mathml`` (fragments as
HTML with MathML), ``views`` (page data), ``security`` (refusing foreign Hosts and cross-site
requests), ``dispatch`` (requests reach the app one at a time, bodies read first), ``server`` (running
it: a thread per connection, each with a deadline).
Flask and latex2mathml come with the ``web`` extra: ``pip install 'problemgen[web]'``.
"""
