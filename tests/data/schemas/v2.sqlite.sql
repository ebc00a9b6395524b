-- ActiveGrade schema version 2 as created by the code of commit 7c19cbd (sqlite),
-- generated from its SQLAlchemy models with CreateTable/CreateIndex; used by tests/test_migrations.py

CREATE TABLE audit_events (
	id INTEGER NOT NULL, 
	at DATETIME NOT NULL, 
	actor VARCHAR(320) NOT NULL, 
	action VARCHAR(50) NOT NULL, 
	project_id INTEGER, 
	detail JSON NOT NULL, 
	PRIMARY KEY (id)
);

CREATE INDEX ix_audit_events_project ON audit_events (project_id);

CREATE TABLE projects (
	id INTEGER NOT NULL, 
	name VARCHAR(200) NOT NULL, 
	created_at DATETIME NOT NULL, 
	settings JSON NOT NULL, 
	status VARCHAR(20) NOT NULL, 
	progress_done INTEGER NOT NULL, 
	progress_total INTEGER NOT NULL, 
	progress_message TEXT NOT NULL, 
	error TEXT NOT NULL, 
	updated_at DATETIME NOT NULL, 
	PRIMARY KEY (id), 
	UNIQUE (name)
);

CREATE TABLE schema_version (
	version INTEGER NOT NULL, 
	PRIMARY KEY (version)
);

CREATE TABLE users (
	id INTEGER NOT NULL, 
	name VARCHAR(200) NOT NULL, 
	email VARCHAR(320), 
	role VARCHAR(20) NOT NULL, 
	password_hash TEXT, 
	active BOOLEAN NOT NULL, 
	created_at DATETIME NOT NULL, 
	PRIMARY KEY (id), 
	UNIQUE (name), 
	UNIQUE (email)
);

CREATE TABLE grades (
	id INTEGER NOT NULL, 
	project_id INTEGER NOT NULL, 
	position INTEGER NOT NULL, 
	value FLOAT NOT NULL, 
	label VARCHAR(200) NOT NULL, 
	grader VARCHAR(200) NOT NULL, 
	comment TEXT NOT NULL, 
	seconds FLOAT, 
	created_at DATETIME NOT NULL, 
	retracted_at DATETIME, 
	PRIMARY KEY (id), 
	FOREIGN KEY(project_id) REFERENCES projects (id) ON DELETE CASCADE
);

CREATE INDEX ix_grades_project_position ON grades (project_id, position);

CREATE TABLE input_files (
	id INTEGER NOT NULL, 
	project_id INTEGER NOT NULL, 
	role VARCHAR(20) NOT NULL, 
	name VARCHAR(500) NOT NULL, 
	content BLOB NOT NULL, 
	PRIMARY KEY (id), 
	UNIQUE (project_id, role), 
	FOREIGN KEY(project_id) REFERENCES projects (id) ON DELETE CASCADE
);

CREATE TABLE items (
	project_id INTEGER NOT NULL, 
	position INTEGER NOT NULL, 
	item_id VARCHAR(500) NOT NULL, 
	stratum INTEGER NOT NULL, 
	data JSON NOT NULL, 
	PRIMARY KEY (project_id, position), 
	FOREIGN KEY(project_id) REFERENCES projects (id) ON DELETE CASCADE
);

CREATE TABLE memberships (
	project_id INTEGER NOT NULL, 
	user_id INTEGER NOT NULL, 
	created_at DATETIME NOT NULL, 
	PRIMARY KEY (project_id, user_id), 
	FOREIGN KEY(project_id) REFERENCES projects (id) ON DELETE CASCADE, 
	FOREIGN KEY(user_id) REFERENCES users (id) ON DELETE CASCADE
);

CREATE TABLE reservations (
	project_id INTEGER NOT NULL, 
	position INTEGER NOT NULL, 
	slot INTEGER NOT NULL, 
	grader VARCHAR(200) NOT NULL, 
	reserved_at DATETIME NOT NULL, 
	expires_at DATETIME NOT NULL, 
	PRIMARY KEY (project_id, position, slot), 
	FOREIGN KEY(project_id) REFERENCES projects (id) ON DELETE CASCADE
);

CREATE INDEX ix_reservations_project_grader ON reservations (project_id, grader);

CREATE TABLE skips (
	id INTEGER NOT NULL, 
	project_id INTEGER NOT NULL, 
	position INTEGER NOT NULL, 
	grader VARCHAR(200) NOT NULL, 
	created_at DATETIME NOT NULL, 
	PRIMARY KEY (id), 
	FOREIGN KEY(project_id) REFERENCES projects (id) ON DELETE CASCADE
);

CREATE INDEX ix_skips_project_position ON skips (project_id, position);

INSERT INTO schema_version (version) VALUES (2);
