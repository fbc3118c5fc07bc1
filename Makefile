.PHONY: serve test
serve:
	./scripts/serve.sh
test:
	./scripts/test.sh $(ARGS)
