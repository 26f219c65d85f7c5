"""The pure floor: checkers and classifiers over plain data read from AWS; no boto3, not even for a type."""
