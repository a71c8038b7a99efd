"""The AWS Lambda handler's published name, ``lancelot_cli.server.aws_lambda.handler`` (the
Dockerfile's CMD and every deployed function's configuration name it); the code is
``server/transports/aws_lambda.py``."""

from lancelot_cli.server.transports.aws_lambda import handler

__all__ = ["handler"]
