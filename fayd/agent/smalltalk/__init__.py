"""Small talk a 135M model must not be left with: its kinds, recognised (``kinds``), their
warm short answers (``answers``) and listening to what the person tells next (``told``)."""
