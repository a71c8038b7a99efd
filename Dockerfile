# AWS Lambda image (arm64) serving Lancelot's read-only MCP tools over an API Gateway HTTP API.
#   docker buildx build --platform linux/arm64 --provenance=false -t lancelot-lambda .
# The database is not baked in: point LANCEDB_PATH at s3://bucket/prefix (or an EFS mount).
FROM --platform=linux/arm64 public.ecr.aws/lambda/python:3.12

COPY pyproject.toml LICENSE /tmp/src/
COPY docs/pypi.md /tmp/src/docs/pypi.md
COPY lancelot_cli /tmp/src/lancelot_cli
# The lambda extra: Mangum, which turns API Gateway events into ASGI requests.
RUN pip install --no-cache-dir --target "${LAMBDA_TASK_ROOT}" "/tmp/src[lambda]" && rm -rf /tmp/src

# Lambda may write only under /tmp: Lancelot keeps its settings there.
ENV LANCELOT_CONFIG_DIR=/tmp/lancelot

CMD ["lancelot_cli.server.aws_lambda.handler"]
