"""What the model cannot know: the gate that keeps such questions from it (``gate``) and
their answers from fayd's records, or an honest "I don't know" with a next step (``skill``)."""
