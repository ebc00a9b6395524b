.PHONY: demo test
# ARGS are passed on: make demo ARGS="--server.port 8502", make test ARGS="-m 'not e2e'"
demo:
	bash scripts/demo.sh $(ARGS)
test:
	bash scripts/test.sh $(ARGS)
