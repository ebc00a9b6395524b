.PHONY: demo test
# ARGS are passed on to streamlit or pytest: make test ARGS="-m 'not e2e'"
demo:
	bash scripts/demo.sh $(ARGS)
test:
	bash scripts/test.sh $(ARGS)
