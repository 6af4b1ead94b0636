"""The fake OpenAI and Anthropic APIs on 127.0.0.1, in one place: the server `zeroscrolls serve-mock` runs and the
tests script (server.py), what it answers (answers.py) and the stand-in models it serves (stand_ins.py).

Only two modules outside this folder import it: the model lookup (providers/models.py), which consults the
stand-ins' profiles, and the serve-mock command. The HTTP providers learn that a model is a stand-in from its
profile (`ModelProfile.stand_in`, `start_hint`).
"""
