# Two commands for a learner: `make lab` and `make test`. Both create .venv on first use.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
PYTEST_ARGS ?= -n auto --dist loadgroup
LAB_ARGS ?=
# The course's language: en (course/) or ko (course/ko/, with JupyterLab's own menus in Korean).
COURSE_LANG ?= en
LAB_ROOT ?= $(if $(filter en,$(COURSE_LANG)),course,course/$(COURSE_LANG))
# Jupyter refuses to run as root unless told; containers and CI run as root.
AS_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root,)

.PHONY: lab test release handout grade bench lint clean

$(STAMP): pyproject.toml constraints.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip
	$(BIN)/python -m pip install -c constraints.txt -e '.[test,hub]'
	@touch $(STAMP)

## lab: set up .venv if needed and open JupyterLab on the learner notebooks in course/
##      (make lab COURSE_LANG=ko: the Korean course in course/ko/, in a Korean JupyterLab)
# autograder/lab holds the course's JupyterLab settings: no first-run questions, the course's
# notebooks trusted; autograder/lab/LANG adds a language's (a JUPYTER_CONFIG_PATH of your own
# is kept after them).
LAB_LANG_CONFIG := $(if $(filter en,$(COURSE_LANG)),,$(CURDIR)/autograder/lab/$(COURSE_LANG):)
LAB_CONFIG := $(LAB_LANG_CONFIG)$(CURDIR)/autograder/lab$(if $(JUPYTER_CONFIG_PATH),:$(JUPYTER_CONFIG_PATH))
lab: $(STAMP)
	@test -d "$(LAB_ROOT)" || { echo "make lab: no course in $(LAB_ROOT) (COURSE_LANG=$(COURSE_LANG)); COURSE_LANG is en or ko" >&2; exit 2; }
	JUPYTER_CONFIG_PATH="$(LAB_CONFIG)" $(BIN)/jupyter lab --ServerApp.root_dir=$(LAB_ROOT) $(AS_ROOT) $(LAB_ARGS)

## test: set up .venv if needed and run the whole suite
test: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

## release: regenerate course/ from solutions/ through nbgrader
release: $(STAMP)
	$(BIN)/python -m autograder release

## grade: grade a class in parallel, sandboxed: make grade SUBMISSIONS=<folder or .zip> [OUT=graded]
SUBMISSIONS ?=
OUT ?= graded
GRADE_ARGS ?=
grade: $(STAMP)
	@test -n "$(SUBMISSIONS)" || { echo "usage: make grade SUBMISSIONS=<folder or .zip> [OUT=graded]" >&2; exit 2; }
	$(BIN)/python -m autograder grade "$(SUBMISSIONS)" --out "$(OUT)" $(GRADE_ARGS)

## handout: zip course/ and the packages it imports for learners (dist/autograd-course-handout.zip)
handout: $(STAMP)
	$(BIN)/python -m autograder handout

## bench: print the benchmark table
bench: $(STAMP)
	$(BIN)/python -m tests.bench

lint: $(STAMP)
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
