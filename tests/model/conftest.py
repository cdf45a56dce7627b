from tests.fixtures import model_clients

# The model servers' fakes and clients (tests/fixtures/model_clients.py).
fake = model_clients.fake
client = model_clients.client
openai_options = model_clients.openai_options
openai_fake = model_clients.openai_fake
openai_client = model_clients.openai_client
