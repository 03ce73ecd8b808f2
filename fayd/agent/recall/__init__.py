"""What the person told fayd: remembering and answering from memory (``skill``) and from
the facts they mentioned in passing (``facts``)."""
