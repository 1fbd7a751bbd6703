FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY client/ client/
COPY pyproject.toml ./
RUN pip install --no-cache-dir ./client && pip install --no-cache-dir .
COPY . .
RUN DEBUG=1 python manage.py collectstatic --noinput -v0
EXPOSE 8000
CMD ["gunicorn", "registry.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "4"]
