"""What both Threadline processes need: ORM models, settings, natural keys, enums."""
